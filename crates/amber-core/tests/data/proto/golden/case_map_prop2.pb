
q
map_prop2.proto"V
M
a (2	.M.AEntryBRa4
AEntry
key (	Rkey
value (	Rvalue:8bproto3