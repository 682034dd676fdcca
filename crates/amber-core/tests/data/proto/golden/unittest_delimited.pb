
‚
/google/protobuf/unittest_delimited_import.protoeditions_unittest"+
MessageImport
a (Ra
b (RbBPbeditionspè
Æ
(google/protobuf/unittest_delimited.protoeditions_unittest/google/protobuf/unittest_delimited_import.proto",
LengthPrefixed
a (Ra
b (Rb"/
NotGroupLikeScope
a (Ra
b (Rb"0
GroupLikeFileScope
a (Ra
b (Rb"Ý
TestDelimitedW
lengthprefixed (2/.editions_unittest.TestDelimited.LengthPrefixedRlengthprefixed?
nested (2 .editions_unittest.TestDelimitedBª(RnestedO
	grouplike (2*.editions_unittest.TestDelimited.GroupLikeBª(R	grouplikeU
notgrouplike (2*.editions_unittest.TestDelimited.GroupLikeBª(RnotgrouplikeY
notgrouplikescope (2$.editions_unittest.NotGroupLikeScopeBª(RnotgrouplikescopeM
messageimport (2 .editions_unittest.MessageImportBª(Rmessageimport,
LengthPrefixed
a (Ra
b (Rb'
	GroupLike
a (Ra
b (Rb*	è€€€€:l
lengthprefixed .editions_unittest.TestDelimitedì (2!.editions_unittest.LengthPrefixedRlengthprefixed:
grouplikefilescope .editions_unittest.TestDelimitedè (2%.editions_unittest.GroupLikeFileScopeBª(Rgrouplikefilescope:
not_group_like_scope .editions_unittest.TestDelimitedé (2$.editions_unittest.NotGroupLikeScopeBª(RnotGroupLikeScope:r
	grouplike .editions_unittest.TestDelimitedê (2*.editions_unittest.TestDelimited.GroupLikeBª(R	grouplike:p
messageimport .editions_unittest.TestDelimitedë (2 .editions_unittest.MessageImportBª(RmessageimportBPbeditionspè