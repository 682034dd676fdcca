//! Exact numbers and identifiers, both halves: `decimal.Decimal` (its exact
//! text), `fractions.Fraction` (two ints, each within the format's size
//! limit so that normalising stays cheap) and `uuid.UUID` (16 bytes and its
//! safety). Complex numbers are atoms of the encoder's dispatch.

use amber_core::codec::format as f;
use amber_core::codec::writer as w;
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyInt;

use crate::codec::decode::PyBuilder;
use crate::codec::encode::{fail, Encoder, OrFail, R};
use crate::errors::EncodeKind;
use crate::ffi::borrowed::Borrowed;
use crate::ffi::obj::Obj;
use crate::typeref;
use crate::values::decimal;
use crate::values::uuid::{self, Safety};

impl<'py> Encoder<'py> {
    pub(crate) fn decimal(&mut self, d: &Bound<'py, PyAny>) -> R {
        let text = decimal::text_of(d).or_fail()?;
        w::write_decimal(&mut self.out, text.to_str().or_fail()?.as_bytes());
        Ok(())
    }

    pub(crate) fn fraction(&mut self, fr: &Bound<'py, PyAny>) -> R {
        let py = self.py;
        let num = fr.getattr(intern!(py, "numerator")).or_fail()?;
        let den = fr.getattr(intern!(py, "denominator")).or_fail()?;
        w::write_fraction_header(&mut self.out);
        self.nested(|e| {
            e.fraction_part(&num)?;
            e.fraction_part(&den)
        })
    }

    /// A numerator or denominator, within the format's size limit.
    fn fraction_part(&mut self, part: &Bound<'py, PyAny>) -> R {
        let at = self.out.len();
        self.item(part.into())?;
        if self.out.len() - at > f::FRACTION_PART_MAX_ITEM {
            return fail(
                EncodeKind::Limit,
                format!(
                    "Fraction parts are limited to {} bytes ({} bits), to bound decoding time",
                    f::FRACTION_PART_MAX_BYTES,
                    f::FRACTION_PART_MAX_BYTES * 8 - 1
                ),
            );
        }
        Ok(())
    }

    pub(crate) fn uuid(&mut self, u: &Bound<'py, PyAny>) -> R {
        let (raw, safety) = uuid::parts_of(u).or_fail()?;
        w::write_uuid(&mut self.out, &raw, safety as u8);
        Ok(())
    }

    /// A `complex` (exactly).
    pub(crate) fn complex(&mut self, o: Borrowed<'_>) -> R {
        let Some((real, imag)) = o.exact_complex() else {
            return fail(EncodeKind::Unsupported, "not a complex");
        };
        w::write_complex(&mut self.out, real, imag);
        Ok(())
    }
}

impl<'py> PyBuilder<'py, '_> {
    #[inline(never)]
    pub(crate) fn decimal_(&mut self, text: &str) -> PyResult<Obj> {
        Ok(self.obj(decimal::new_decimal(self.py, text)?))
    }

    #[inline(never)]
    pub(crate) fn fraction_(&mut self, num: Obj, den: Obj) -> PyResult<Obj> {
        let (num, den) = (self.bound(&num), self.bound(&den));
        if !num.is_exact_instance_of::<PyInt>() || !den.is_exact_instance_of::<PyInt>() {
            return Err(PyValueError::new_err("Fraction parts must be ints"));
        }
        if den.le(0)? {
            return Err(PyValueError::new_err(
                "Fraction denominator must be positive",
            ));
        }
        Ok(self.obj(typeref::fraction(self.py)?.call1((num, den))?))
    }

    #[inline(never)]
    pub(crate) fn uuid_(&mut self, bytes: [u8; 16], safe: u8) -> PyResult<Obj> {
        let safety = Safety::from_code(safe)
            .ok_or_else(|| PyValueError::new_err(format!("unknown UUID safety code {safe}")))?;
        Ok(self.obj(uuid::new_uuid(self.py, &bytes, safety)?))
    }

    #[inline(never)]
    pub(crate) fn complex_(&mut self, re: f64, im: f64) -> PyResult<Obj> {
        // SAFETY: PyComplex_FromDoubles returns a new reference or NULL with
        // an exception set.
        unsafe { self.own(ffi::PyComplex_FromDoubles(re, im)) }
    }
}
