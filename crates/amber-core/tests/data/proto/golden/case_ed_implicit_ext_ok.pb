
]
ed_implicit_ext_ok.proto"
M
m (2.MRm*:
x.M (RxB’beditionspè