//! The builder a parse checks kept sub-messages with (see `Decoder::check`).

use crate::proto::runtime::builder::{MapValue, MessageBuilder};
use crate::proto::runtime::scalar::Scalar;
use crate::proto::runtime::schema::FieldInfo;

/// The builder of [`Decoder::check`]: keeps nothing, fails never, and
/// builds its sub-messages (so the check walks the whole tree).
pub(super) struct Check;

impl MessageBuilder for Check {
    type Msg = ();
    type Err = std::convert::Infallible;
    #[inline(always)]
    fn start(&mut self, _: u32) -> Result<(), Self::Err> {
        Ok(())
    }
    #[inline(always)]
    fn set(&mut self, _: &mut (), _: &FieldInfo, _: Scalar<'_>) -> Result<(), Self::Err> {
        Ok(())
    }
    #[inline(always)]
    fn push(&mut self, _: &mut (), _: &FieldInfo, _: Scalar<'_>) -> Result<(), Self::Err> {
        Ok(())
    }
    #[inline(always)]
    fn push_bits(&mut self, _: &mut (), _: &FieldInfo, _: &[u64]) -> Result<(), Self::Err> {
        Ok(())
    }
    #[inline(always)]
    fn set_bits(&mut self, _: &mut (), _: &FieldInfo, _: u64) -> Result<(), Self::Err> {
        Ok(())
    }
    #[inline(always)]
    fn begin(&mut self, _: &mut (), _: &FieldInfo, _: u32) -> Result<(), Self::Err> {
        Ok(())
    }
    #[inline(always)]
    fn end(&mut self, _: &mut (), _: &FieldInfo, _: ()) -> Result<(), Self::Err> {
        Ok(())
    }
    #[inline(always)]
    fn map_entry(
        &mut self,
        _: &mut (),
        _: &FieldInfo,
        _: Scalar<'_>,
        _: MapValue<'_, ()>,
    ) -> Result<(), Self::Err> {
        Ok(())
    }
    #[inline(always)]
    fn unknown(&mut self, _: &mut (), _: &[u8]) -> Result<(), Self::Err> {
        Ok(())
    }
}
