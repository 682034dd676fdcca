
D
ed_legacy_req_msg.proto"
M
m (2.MBªRmbeditionspè