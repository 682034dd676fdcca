
'

crlf.proto"
M
a (Rabproto3