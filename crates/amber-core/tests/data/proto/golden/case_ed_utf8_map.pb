
ž
ed_utf8_map.proto"|
M
m (2	.M.MEntryBª Rm
r (	Bª RrB
MEntry
key (	Bª Rkey
value (	Bª Rvalue:8beditionspè