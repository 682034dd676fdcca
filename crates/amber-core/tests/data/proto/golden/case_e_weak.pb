
%
e_weak.proto"
M
a (BPRa