
v
vis_same_file.protod"
Same
In"7
User
i (2
.d.Same.InRi
l (2.d.Loc2Rl"
Loc2Xbeditionspé