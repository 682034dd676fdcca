
á
$google/protobuf/unittest_arena.protoproto2_arena_unittest"
NestedMessage
d (Rd"l
ArenaMessage\
repeated_nested_message (2$.proto2_arena_unittest.NestedMessageRrepeatedNestedMessageBø’beditionspè