
:
ext_range_opts.proto""
M*dÈ*È¬*¬­*­®