
2
no_syntax.proto"
M
a (Ra
b (	Rb