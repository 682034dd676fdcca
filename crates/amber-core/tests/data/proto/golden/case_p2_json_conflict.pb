
N
p2_json_conflict.proto"4
M
foo_bar (RfooBar
fooBar (RfooBar