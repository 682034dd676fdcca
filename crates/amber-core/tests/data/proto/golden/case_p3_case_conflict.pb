
I
p3_case_conflict.proto"'
M
foo (Rfoo
Foo (RFoobproto3