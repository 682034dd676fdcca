
‹
scoping.protoa.b"
Foo
x (Rx"ß
Outer
f1 (2.a.b.Outer.FooRf1
f2 (2.a.b.FooRf2
f3 (2.a.b.FooRf3
f4 (2.a.b.FooRf4
f5 (2.a.b.Outer.FooRf5!
f6 (2.a.b.Outer.Inner2Rf6!
f7 (2.a.b.Outer.Inner2Rf7
Foo
y (Ryc
Inner
f (2.a.b.Outer.FooRf
g (2.a.b.Outer.FooRg
h (2.a.b.Outer.InnerRh
Inner2