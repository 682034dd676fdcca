
/
jstype_rep_int64.proto"
M
a (B0Ra