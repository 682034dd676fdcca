
‰
map_prop1.proto"i
M 
a (2	.M.AEntryBª RaB
AEntry
key (Bª Rkey
value (	Bª Rvalue:8beditionspè