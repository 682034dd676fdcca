
<
scoping2.protop.q"
q
R"
M
r (2.p.q.q.RRr