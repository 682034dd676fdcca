
Û
json_names.proto"Æ
M
foo_bar (RfooBar
FooBaz (RFooBaz
foo__qux (RfooQux
_lead (RLead
trail_ (Rtrail
x1_2y (Rx12y
a_b_c_d (R
with space
ALLCAPS (RALLCAPS