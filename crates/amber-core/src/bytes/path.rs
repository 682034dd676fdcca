//! `$.path` rendering: where in a value something is, from the root `$`.
//! Shared by every part that reports positions inside nested data.

/// One step of a path into the decoded value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    /// Position in a list, tuple, set or deque.
    Index(usize),
    /// A dict key, already rendered (`.name` for identifiers, `[repr]` otherwise).
    Key(String),
}

/// Render a path as `$`, `$.a[3].b`.
pub fn render_path(path: &[PathSeg]) -> String {
    let mut s = String::from("$");
    for seg in path {
        match seg {
            PathSeg::Index(i) => {
                s.push('[');
                s.push_str(&i.to_string());
                s.push(']');
            }
            PathSeg::Key(k) => s.push_str(k),
        }
    }
    s
}

/// Render a str key as a path segment.
pub fn key_segment(key: &str) -> String {
    let ident = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_alphanumeric() || c == '_');
    if ident {
        format!(".{key}")
    } else {
        format!("[{key:?}]")
    }
}
