
T
escape_forms.proto">
M
a (	:Ra
b (	:S4Rb
c (:\303\277Rc