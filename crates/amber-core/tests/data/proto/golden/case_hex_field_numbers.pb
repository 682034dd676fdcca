
B
hex_field_numbers.proto"
M
a (Ra
b (Rbbproto3