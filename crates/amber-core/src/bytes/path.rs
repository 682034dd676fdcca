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

/// Paths longer than this many steps are shortened in messages.
const SHORT_STEPS: usize = 24;

/// Render a path for a message: as [`render_path`], but a path of more
/// than 24 steps (data nested a thousand levels deep) keeps its first and
/// last ten steps and says how many are left out: `$[0][0]...(980 more
/// levels)...[0]`. The error's `path` attribute keeps the whole path.
pub fn render_path_short(path: &[PathSeg]) -> String {
    if path.len() <= SHORT_STEPS {
        return render_path(path);
    }
    let (head, rest) = path.split_at(10);
    let tail = &rest[rest.len() - 10..];
    let mut s = render_path(head);
    s.push_str(&format!("...({} more levels)...", rest.len() - 10));
    s.push_str(&render_path(tail)[1..]);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_paths_are_shortened_for_messages() {
        let short: Vec<PathSeg> = (0..24).map(PathSeg::Index).collect();
        assert_eq!(render_path_short(&short), render_path(&short));
        let mut long: Vec<PathSeg> = vec![PathSeg::Key(".a".into())];
        long.extend((0..999).map(|_| PathSeg::Index(0)));
        let s = render_path_short(&long);
        assert_eq!(
            s,
            format!(
                "$.a{}...(980 more levels)...{}",
                "[0]".repeat(9),
                "[0]".repeat(10)
            )
        );
    }
}
