"""amber.Archive: the zip of named values, its readers and writers, and other zips it reads."""
