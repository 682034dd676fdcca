
b
float_forms.proto"M
M
a (:1Ra
b (:0.5Rb
c (:100Rc
d (:0.5Rd