
Š
editions_misc.protoed"Ä
M
a (:5Ra
b (Rb
c (BªRc
d (2.ed.MBª(Rd
e (2.ed.E:E_ONERe
s (	Bª Rs
mm (2.ed.M.MmEntryRmm
req (BªRreq
n	 (2.ed.M.NRn
ns
 (2.ed.M.NBª(Rns<
MmEntry
key (	Rkey
value (2.ed.MRvalue:8
N
x (Rx*
E	
E_ONE:B’beditionspè