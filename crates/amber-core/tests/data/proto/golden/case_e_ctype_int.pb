
*
e_ctype_int.proto"
M
a (BRa