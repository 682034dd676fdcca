
_
legacy_json_conflicts.proto"8
M
foo_bar (RfooBar
fooBar (RfooBar:Xbproto3