//! Types by OID: `Scalar`, every element type amber reads and writes with
//! its OIDs (from PostgreSQL's `pg_type.dat`), and `PgType`, a scalar or a
//! one-level array of one.

/// An element type: every type amber reads and writes, arrays aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    Int2,
    Int4,
    Int8,
    Oid,
    Float4,
    Float8,
    Numeric,
    Text,
    Varchar,
    Bpchar,
    Name,
    /// PostgreSQL's one-byte `"char"`.
    Char,
    Bytea,
    Date,
    Time,
    TimeTz,
    Timestamp,
    TimestampTz,
    Interval,
    Uuid,
    Json,
    Jsonb,
    Inet,
    Cidr,
}

/// (type, OID, array type OID, name), from `pg_type.dat`.
const TABLE: [(Scalar, u32, u32, &str); 25] = [
    (Scalar::Bool, 16, 1000, "bool"),
    (Scalar::Bytea, 17, 1001, "bytea"),
    (Scalar::Char, 18, 1002, "char"),
    (Scalar::Name, 19, 1003, "name"),
    (Scalar::Int8, 20, 1016, "int8"),
    (Scalar::Int2, 21, 1005, "int2"),
    (Scalar::Int4, 23, 1007, "int4"),
    (Scalar::Text, 25, 1009, "text"),
    (Scalar::Oid, 26, 1028, "oid"),
    (Scalar::Json, 114, 199, "json"),
    (Scalar::Cidr, 650, 651, "cidr"),
    (Scalar::Float4, 700, 1021, "float4"),
    (Scalar::Float8, 701, 1022, "float8"),
    (Scalar::Inet, 869, 1041, "inet"),
    (Scalar::Bpchar, 1042, 1014, "bpchar"),
    (Scalar::Varchar, 1043, 1015, "varchar"),
    (Scalar::Date, 1082, 1182, "date"),
    (Scalar::Time, 1083, 1183, "time"),
    (Scalar::Timestamp, 1114, 1115, "timestamp"),
    (Scalar::TimestampTz, 1184, 1185, "timestamptz"),
    (Scalar::Interval, 1186, 1187, "interval"),
    (Scalar::TimeTz, 1266, 1270, "timetz"),
    (Scalar::Numeric, 1700, 1231, "numeric"),
    (Scalar::Uuid, 2950, 2951, "uuid"),
    (Scalar::Jsonb, 3802, 3807, "jsonb"),
];

impl Scalar {
    /// Every scalar type, in OID order.
    pub const ALL: [Scalar; 25] = {
        let mut all = [Scalar::Bool; 25];
        let mut i = 0;
        while i < 25 {
            all[i] = TABLE[i].0;
            i += 1;
        }
        all
    };

    fn row(self) -> &'static (Scalar, u32, u32, &'static str) {
        // Every variant has its row: the table is checked by a test.
        TABLE.iter().find(|r| r.0 == self).unwrap_or(&TABLE[0])
    }

    pub fn from_oid(oid: u32) -> Option<Scalar> {
        TABLE.iter().find(|r| r.1 == oid).map(|r| r.0)
    }

    pub fn oid(self) -> u32 {
        self.row().1
    }

    /// The OID of the array type whose elements are this type.
    pub fn array_oid(self) -> u32 {
        self.row().2
    }

    /// PostgreSQL's type name (`typname`): `int4`, `timestamptz`, `char`.
    pub fn name(self) -> &'static str {
        self.row().3
    }

    /// The send format's size for fixed-width types, `None` for variable.
    pub fn fixed_len(self) -> Option<usize> {
        Some(match self {
            Scalar::Bool | Scalar::Char => 1,
            Scalar::Int2 => 2,
            Scalar::Int4 | Scalar::Oid | Scalar::Float4 | Scalar::Date => 4,
            Scalar::Int8 | Scalar::Float8 | Scalar::Time | Scalar::Timestamp => 8,
            Scalar::TimestampTz => 8,
            Scalar::TimeTz => 12,
            Scalar::Interval | Scalar::Uuid => 16,
            _ => return None,
        })
    }
}

/// A column's or parameter's type: a scalar or an array of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PgType {
    Scalar(Scalar),
    /// An array of any number of dimensions (0 to 6) of this element type.
    Array(Scalar),
}

impl PgType {
    /// The type of an OID amber knows (scalar or array), else `None`.
    pub fn from_oid(oid: u32) -> Option<PgType> {
        if let Some(s) = Scalar::from_oid(oid) {
            return Some(PgType::Scalar(s));
        }
        TABLE
            .iter()
            .find(|r| r.2 == oid)
            .map(|r| PgType::Array(r.0))
    }

    pub fn oid(self) -> u32 {
        match self {
            PgType::Scalar(s) => s.oid(),
            PgType::Array(s) => s.array_oid(),
        }
    }

    /// The OID of the array of this type; `None` for an array type (its
    /// arrays are itself, with more dimensions).
    pub fn array_oid(self) -> Option<u32> {
        match self {
            PgType::Scalar(s) => Some(s.array_oid()),
            PgType::Array(_) => None,
        }
    }

    /// PostgreSQL's `typname`: `int4`, and `_int4` for its array.
    pub fn name(self) -> String {
        match self {
            PgType::Scalar(s) => s.name().to_string(),
            PgType::Array(s) => format!("_{}", s.name()),
        }
    }

    /// The element type of an array, `None` for a scalar.
    pub fn element(self) -> Option<Scalar> {
        match self {
            PgType::Array(s) => Some(s),
            PgType::Scalar(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        let mut oids = std::collections::HashSet::new();
        for (i, s) in Scalar::ALL.iter().enumerate() {
            assert_eq!(TABLE[i].0, *s);
            assert_eq!(s.row().0, *s);
            assert!(oids.insert(s.oid()) && oids.insert(s.array_oid()));
            assert_eq!(PgType::from_oid(s.oid()), Some(PgType::Scalar(*s)));
            assert_eq!(PgType::from_oid(s.array_oid()), Some(PgType::Array(*s)));
            assert_eq!(PgType::Array(*s).oid(), s.array_oid());
        }
        assert_eq!(PgType::from_oid(0), None);
        assert_eq!(PgType::from_oid(2249), None);
    }

    #[test]
    fn known_oids() {
        assert_eq!(Scalar::Int4.oid(), 23);
        assert_eq!(Scalar::Int4.array_oid(), 1007);
        assert_eq!(Scalar::Json.array_oid(), 199);
        assert_eq!(Scalar::Char.name(), "char");
        assert_eq!(PgType::from_oid(3807), Some(PgType::Array(Scalar::Jsonb)));
        assert_eq!(PgType::Array(Scalar::Text).name(), "_text");
        assert_eq!(PgType::Scalar(Scalar::Uuid).array_oid(), Some(2951));
        assert_eq!(PgType::Array(Scalar::Uuid).array_oid(), None);
        assert_eq!(PgType::Array(Scalar::Uuid).element(), Some(Scalar::Uuid));
    }
}
