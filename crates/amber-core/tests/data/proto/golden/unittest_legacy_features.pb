
ü
.google/protobuf/unittest_legacy_features.protolegacy_features_unittest"¢
TestEditionsMessage,
required_field (BªRrequiredField]
delimited_field (2-.legacy_features_unittest.TestEditionsMessageBª(RdelimitedFieldbeditionspè