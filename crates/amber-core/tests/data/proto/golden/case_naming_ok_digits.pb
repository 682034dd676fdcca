
=
naming_ok_digits.proto"
M
a1_b (Ra1Bbeditionspé