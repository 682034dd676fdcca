
V
ed_rep_enc_msg.proto"1
M
m (2.MBªRm
s (	BªRsbeditionspè