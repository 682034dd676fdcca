
˜
/google/protobuf/unittest_mset_wire_format.protoproto2_wireformat_unittest",
TestMessageSet*€ÑÜü*€ÑÜüÿÿÿÿ:"p
!TestMessageSetWireFormatContainerK
message_set (2*.proto2_wireformat_unittest.TestMessageSetR
messageSetB)Høª!Google.ProtocolBuffers.TestProtos
À
#google/protobuf/unittest_mset.protoprotobuf_unittest/google/protobuf/unittest_mset_wire_format.proto"f
TestMessageSetContainerK
message_set (2*.proto2_wireformat_unittest.TestMessageSetR
messageSet"†
NestedTestMessageSetContainerH
	container (2*.protobuf_unittest.TestMessageSetContainerR	containerF
child (20.protobuf_unittest.NestedTestMessageSetContainerRchildS

lazy_child (20.protobuf_unittest.NestedTestMessageSetContainerB(R	lazyChild"c
NestedTestInt
a (Ra
b (Rb6
child (2 .protobuf_unittest.NestedTestIntRchild"«
TestMessageSetExtension1
i (RiH
	recursive (2*.proto2_wireformat_unittest.TestMessageSetR	recursive'
test_aliasing (	BRtestAliasing2
message_set_extension*.proto2_wireformat_unittest.TestMessageSet°¦^ (2+.protobuf_unittest.TestMessageSetExtension1RmessageSetExtension"¼
TestMessageSetExtension2
str (	Rstr2
message_set_extension*.proto2_wireformat_unittest.TestMessageSetù»^ (2+.protobuf_unittest.TestMessageSetExtension2RmessageSetExtension"‚
TestMessageSetExtension32
msg# (2 .protobuf_unittest.NestedTestIntRmsg!
required_int$ (RrequiredInt2
message_set_extension*.proto2_wireformat_unittest.TestMessageSet©Ã] (2+.protobuf_unittest.TestMessageSetExtension3RmessageSetExtension"…
RawMessageSet9
item (
2%.protobuf_unittest.RawMessageSet.ItemRitem9
Item
type_id (RtypeId
message (RmessageBHø