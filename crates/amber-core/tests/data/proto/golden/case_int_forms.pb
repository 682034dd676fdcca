
K
int_forms.proto"8
M
a (:0Ra
b (:0Rb
c (:511Rc