//! The one font charts use: DejaVu Sans from the `dejavu` crate. It is
//! registered with plotters' `ab_glyph` font table under the name
//! `sans-serif`, which plotters uses to measure text; PNG text is drawn
//! from the same bytes (`raster`), so no system font is read and the pixels
//! are the same on every machine. SVG text names the family `sans-serif`,
//! so that a browser without DejaVu uses its own sans-serif.

use std::sync::OnceLock;

use ab_glyph::FontRef;
use plotters::style::{register_font, FontStyle};

/// The family name charts ask for.
pub(crate) const FAMILY: &str = "sans-serif";

/// Registers the font with plotters (once per process); false if the
/// embedded font could not be parsed, which would be a broken `dejavu`
/// crate.
pub(crate) fn ensure_registered() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        let regular = register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular()).is_ok();
        let bold = register_font(FAMILY, FontStyle::Bold, dejavu::sans::bold()).is_ok();
        regular && bold
    })
}

/// The parsed regular or bold face, if it parses.
pub(crate) fn face(bold: bool) -> Option<&'static FontRef<'static>> {
    static REGULAR: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    static BOLD: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    let (cell, bytes) = if bold {
        (&BOLD, dejavu::sans::bold())
    } else {
        (&REGULAR, dejavu::sans::regular())
    };
    cell.get_or_init(|| FontRef::try_from_slice(bytes).ok())
        .as_ref()
}
