
Ä
nested_extend.proto"
Base*
e"x
Holder
G
x (Rx&
Deeper2
h.Base (2.HolderRh2
a.Base
 (Ra2
g.Base (
2	.Holder.GRg:%
top_g.Base (2	.Holder.GRtopG