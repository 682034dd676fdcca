
‹
map_prop3.proto"k
M
a (2	.M.AEntryBªRaF
AEntry
key (	BªRkey
value (2.MBªRvalue:8beditionspè