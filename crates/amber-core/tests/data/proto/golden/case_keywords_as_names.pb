
Â
keywords_as_names.proto"Ò
message
message (Rmessage
option (Roption
enum (Renum
syntax (Rsyntax
package (Rpackage
import (Rimport

reserved_x (R	reservedX

optional_y (R	optionalY
map_z	 (RmapZ
stream
 (Rstream
rpc (Rrpc
returns (Rreturns
max (Rmax
to (Rto"
Stream2@
S
stream.Stream.Stream0
returns.Stream.Stream(bproto3