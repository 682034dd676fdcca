//! An entry's bytes: compression, decompression that never produces more
//! than the size the directory declares, CRC-32, and BLAKE3 content hashes.

use std::io::{Read, Write};

use super::error::{ArchiveError, ArchiveErrorKind, Res};
use super::zip::Method;

/// zstd level 3, measured on this project's 2-core machine against levels 1
/// and 6 (MB/s, size as % of input): 8 MB of amber records 438, 15.2%
/// (level 1: 547, 21.2%; level 6: 202, 10.4%); 64 MB of normals rounded to
/// 3 decimals 262, 29.5% (1: 328, 35.2%; 6: 90, 32.2%); 11 MB of JSON 785,
/// 4.3% (1: 953, 5.2%); random float64, which no level shrinks below 94%,
/// about 300 at every level. Level 3 is a fifth slower than level 1 and a
/// quarter to a third smaller on structured data; level 6 is 2 to 3 times
/// slower still.
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;
/// zstd level 1 for array and table data (`.npy`, Arrow, Parquet entries and
/// an amber entry's out-of-band buffers), where level 3's extra search finds
/// little: the 500,000 x 20 frame of the archive benchmark (half normal
/// floats, half small ints) as an 84 MB Arrow IPC file compressed to 48.2 MB
/// in 208 ms at level 1, 50.4 MB in 322 ms at level 3 and 51.2 MB in 637 ms
/// at level 6 (two worker threads each).
pub const DEFAULT_ZSTD_BINARY_LEVEL: i32 = 1;
/// deflate level 6 (zlib's default; the zlib-rs backend): 6.4 MB of pickled
/// records 48 MB/s to 15.9%, where level 1 made 26.3% and level 9 took
/// twice as long for 15.6%. Deflate is for other tools; zstd is the fast
/// choice.
pub const DEFAULT_DEFLATE_LEVEL: u32 = 6;

/// zstd splits inputs of at least this size over this many worker threads.
const MULTITHREAD_MIN: usize = 8 << 20;
const ZSTD_WORKERS: u32 = 2;

pub fn compress(method: Method, level: Option<i32>, data: &[u8]) -> Res<Vec<u8>> {
    let io = |e: std::io::Error| {
        ArchiveError::new(
            ArchiveErrorKind::Malformed,
            format!("compression failed: {e}"),
        )
    };
    match method {
        Method::Stored => Ok(data.to_vec()),
        Method::Deflate => {
            let level = level.map_or(DEFAULT_DEFLATE_LEVEL, |l| l.clamp(0, 9) as u32);
            let mut enc = flate2::write::DeflateEncoder::new(
                Vec::with_capacity(data.len() / 2 + 64),
                flate2::Compression::new(level),
            );
            enc.write_all(data).map_err(io)?;
            enc.finish().map_err(io)
        }
        Method::Zstd => {
            let level = level.unwrap_or(DEFAULT_ZSTD_LEVEL);
            let mut c = zstd::bulk::Compressor::new(level).map_err(io)?;
            c.include_contentsize(true).map_err(io)?;
            c.include_checksum(false).map_err(io)?;
            // Large inputs are split over zstd's own worker threads: the same
            // format, faster on more than one core. The count is fixed, not
            // the machine's, so equal content compresses to equal bytes
            // everywhere.
            if data.len() >= MULTITHREAD_MIN {
                c.multithread(ZSTD_WORKERS).map_err(io)?;
            }
            c.compress(data).map_err(io)
        }
    }
}

/// Compresses an entry that arrives in pieces (an Arrow file or an array
/// as it is written out), hashing the pieces as they go by: no copy of the
/// whole entry is made, and the caller writes each piece's compressed bytes
/// as they come. The output depends only on the content, method and level,
/// not on how the content is cut into pieces: the encoder is fed blocks of
/// [`FEED`] bytes (deflate's output, unlike zstd's, depends on how its input
/// arrives). It can differ from [`compress`]'s, which sees the whole input
/// at once.
pub struct StreamCompressor {
    enc: Encoder,
    /// The content's BLAKE3 (before any shuffle).
    blake: blake3::Hasher,
    /// The CRC-32 of what the zip holds: the content after the shuffle.
    crc: crc32fast::Hasher,
    len: u64,
    size: u64,
    /// The byte-shuffle width (see [`shuffle`]); 0 for none.
    shuffle: usize,
    /// Content not yet fed to the encoder: less than one block.
    pending: Vec<u8>,
    /// A shuffled block on its way to the encoder.
    scratch: Vec<u8>,
    /// Output of [`write_overlapped`](Self::write_overlapped) not yet
    /// handed to its sink.
    ready: Vec<u8>,
}

/// The block size a [`StreamCompressor`]'s encoder is fed in.
pub const FEED: usize = 1 << 20;

enum Encoder {
    Zstd(zstd::stream::write::Encoder<'static, Vec<u8>>),
    Deflate(flate2::write::DeflateEncoder<Vec<u8>>),
}

impl StreamCompressor {
    /// A compressor for `size` bytes of content (the zstd frame records the
    /// size, as [`compress`]'s does), byte-shuffled first when `shuffle` is
    /// a width of [`SHUFFLE_WIDTHS`] (0: not shuffled). `Stored` is not
    /// compression.
    pub fn new(method: Method, level: Option<i32>, size: u64, shuffle: usize) -> Res<Self> {
        check_shuffle(shuffle)?;
        let enc = match method {
            Method::Stored => {
                return Err(ArchiveError::new(
                    ArchiveErrorKind::Malformed,
                    "stored entries are not compressed",
                ))
            }
            Method::Deflate => {
                let level = level.map_or(DEFAULT_DEFLATE_LEVEL, |l| l.clamp(0, 9) as u32);
                Encoder::Deflate(flate2::write::DeflateEncoder::new(
                    Vec::new(),
                    flate2::Compression::new(level),
                ))
            }
            Method::Zstd => {
                let level = level.unwrap_or(DEFAULT_ZSTD_LEVEL);
                let mut e =
                    zstd::stream::write::Encoder::new(Vec::new(), level).map_err(io_fail)?;
                e.include_contentsize(true).map_err(io_fail)?;
                e.include_checksum(false).map_err(io_fail)?;
                e.set_pledged_src_size(Some(size)).map_err(io_fail)?;
                if size >= MULTITHREAD_MIN as u64 {
                    e.multithread(ZSTD_WORKERS).map_err(io_fail)?;
                }
                Encoder::Zstd(e)
            }
        };
        Ok(StreamCompressor {
            enc,
            blake: blake3::Hasher::new(),
            crc: crc32fast::Hasher::new(),
            len: 0,
            size,
            shuffle,
            pending: Vec::new(),
            scratch: Vec::new(),
            ready: Vec::new(),
        })
    }

    /// One block (a whole [`FEED`], or the content's last bytes) to the
    /// hash and the encoder, shuffled when asked. Each pass over a block
    /// (hash, shuffle, CRC-32, the encoder's copy) follows the one before
    /// while the block is in the cache: hashing a whole piece first, then
    /// shuffling it, read every byte from memory twice.
    fn feed(&mut self, block: &[u8]) -> Res<()> {
        self.blake.update(block);
        let block = if self.shuffle > 1 {
            self.scratch.resize(block.len(), 0);
            shuffle(block, self.shuffle, &mut self.scratch);
            &self.scratch[..]
        } else {
            block
        };
        self.crc.update(block);
        match &mut self.enc {
            Encoder::Zstd(e) => e.write_all(block),
            Encoder::Deflate(e) => e.write_all(block),
        }
        .map_err(io_fail)
    }

    /// Take `piece`; the compressed bytes made ready by it (often none),
    /// valid until the next call. The output buffer keeps its room from
    /// call to call, so a long entry does not grow a new one each time.
    pub fn write(&mut self, piece: &[u8]) -> Res<&[u8]> {
        self.out_mut().clear();
        if self.len + piece.len() as u64 > self.size {
            return Err(ArchiveError::new(
                ArchiveErrorKind::Malformed,
                format!("content passes its declared size of {} bytes", self.size),
            ));
        }
        self.len += piece.len() as u64;
        // Whole blocks, from the piece itself where it holds them (zstd's
        // workers compress what they take while this thread goes on).
        let mut rest = piece;
        if !self.pending.is_empty() {
            let take = (FEED - self.pending.len()).min(rest.len());
            self.pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.pending.len() == FEED {
                let block = std::mem::take(&mut self.pending);
                self.feed(&block)?;
                self.pending = block;
                self.pending.clear();
            }
        }
        while rest.len() >= FEED {
            self.feed(&rest[..FEED])?;
            rest = &rest[FEED..];
        }
        self.pending.extend_from_slice(rest);
        Ok(self.out_mut())
    }

    /// [`write`](Self::write), with the output of the call before handed to
    /// `sink` (the archive's file) on a second thread while this piece is
    /// compressed: putting compressed pages into a file costs the kernel
    /// about as much as making them, and the two now overlap. The output
    /// of the last call comes back from [`finish`](Self::finish). Returns
    /// the sink's result. A compressor is written with one of `write` and
    /// `write_overlapped`, not both.
    pub fn write_overlapped<E: Send>(
        &mut self,
        piece: &[u8],
        sink: impl FnOnce(&[u8]) -> Result<(), E> + Send,
    ) -> Res<Result<(), E>> {
        let mut ready = std::mem::take(&mut self.ready);
        let (sent, done) = if ready.len() < PARALLEL_MIN {
            let sent = if ready.is_empty() {
                Ok(())
            } else {
                sink(&ready)
            };
            (sent, self.write(piece).map(|_| ()))
        } else {
            std::thread::scope(|s| {
                let sending = s.spawn(|| sink(&ready));
                let done = self.write(piece).map(|_| ());
                let sent = sending
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p));
                (sent, done)
            })
        };
        done?;
        // The new output becomes `ready`; the buffer just sent, emptied,
        // takes the encoder's next output.
        ready.clear();
        std::mem::swap(self.out_mut(), &mut ready);
        self.ready = ready;
        Ok(sent)
    }

    fn out_mut(&mut self) -> &mut Vec<u8> {
        match &mut self.enc {
            Encoder::Zstd(e) => e.get_mut(),
            Encoder::Deflate(e) => e.get_mut(),
        }
    }

    /// The last compressed bytes (with the output of the last
    /// [`write_overlapped`](Self::write_overlapped)), the CRC-32 of what the
    /// zip holds (the shuffled content when shuffled) and the content's
    /// BLAKE3 hex.
    pub fn finish(mut self) -> Res<(Vec<u8>, u32, String)> {
        if self.len != self.size {
            return Err(ArchiveError::new(
                ArchiveErrorKind::Malformed,
                format!(
                    "content is {} bytes, not its declared {}",
                    self.len, self.size
                ),
            ));
        }
        self.out_mut().clear();
        let last = std::mem::take(&mut self.pending);
        self.feed(&last)?;
        let tail = match self.enc {
            Encoder::Zstd(e) => e.finish(),
            Encoder::Deflate(e) => e.finish(),
        }
        .map_err(io_fail)?;
        let mut last = self.ready;
        last.extend_from_slice(&tail);
        Ok((
            last,
            self.crc.finalize(),
            self.blake.finalize().to_hex().to_string(),
        ))
    }
}

fn io_fail(e: std::io::Error) -> ArchiveError {
    ArchiveError::new(
        ArchiveErrorKind::Malformed,
        format!("compression failed: {e}"),
    )
}

/// Exactly `size` bytes from an entry's stored `data`, checked against
/// `crc32`, then unshuffled when the entry was shuffled with width
/// `shuffle` (0: not shuffled). Output beyond `size` is refused as it
/// appears, so a stream that lies about its size never allocates more than
/// `size` (plus one read).
pub fn decompress(
    method: Method,
    data: &[u8],
    size: u64,
    crc32: u32,
    shuffle: usize,
    entry: &str,
) -> Res<Vec<u8>> {
    check_shuffle(shuffle).map_err(|e| e.entry(entry))?;
    let mut out = match method {
        Method::Stored => {
            if data.len() as u64 != size {
                return Err(mismatch(entry, size, data.len() as u64));
            }
            data.to_vec()
        }
        Method::Deflate => read_bounded(flate2::read::DeflateDecoder::new(data), size, entry)?,
        Method::Zstd => {
            let dec = zstd::stream::read::Decoder::with_buffer(data)
                .map_err(|e| corrupt(entry, &e.to_string()))?
                .single_frame();
            read_bounded(dec, size, entry)?
        }
    };
    if crc32fast::hash(&out) != crc32 {
        return Err(
            ArchiveError::new(ArchiveErrorKind::Checksum, "the data fails its CRC-32").entry(entry),
        );
    }
    if shuffle > 1 {
        let mut scratch = Vec::with_capacity(FEED.min(out.len()));
        for block in out.chunks_mut(FEED) {
            scratch.clear();
            scratch.extend_from_slice(block);
            unshuffle(&scratch, shuffle, block);
        }
    }
    Ok(out)
}

/// The byte-shuffle widths an entry may be shuffled with (the element
/// sizes of the numbers it holds).
pub const SHUFFLE_WIDTHS: [usize; 4] = [2, 4, 8, 16];

fn check_shuffle(width: usize) -> Res<()> {
    if width == 0 || SHUFFLE_WIDTHS.contains(&width) {
        return Ok(());
    }
    Err(ArchiveError::new(
        ArchiveErrorKind::Malformed,
        format!("byte-shuffle width {width}: amber shuffles by 2, 4, 8 or 16 bytes"),
    ))
}

/// The byte shuffle of one block (Blosc's and HDF5's filter): its first
/// `n - n % width` bytes, read as elements of `width` bytes, are written
/// as `width` planes (byte 0 of every element, then byte 1, ...); the last
/// `n % width` bytes follow as they are. Numbers of one column differ most
/// in their low bytes, so the planes of the high bytes are long runs that
/// compress far better, and faster, than the numbers did. `dst` is as long
/// as `src`.
pub fn shuffle(src: &[u8], width: usize, dst: &mut [u8]) {
    match width {
        2 => shuffle_w::<2, 32>(src, dst),
        4 => shuffle_w::<4, 32>(src, dst),
        8 => shuffle_w::<8, 8>(src, dst),
        16 => shuffle_w::<16, 8>(src, dst),
        _ => dst.copy_from_slice(src),
    }
}

/// The inverse of [`shuffle`].
pub fn unshuffle(src: &[u8], width: usize, dst: &mut [u8]) {
    match width {
        2 => unshuffle_w::<2>(src, dst),
        4 => unshuffle_w::<4>(src, dst),
        8 => unshuffle_w::<8>(src, dst),
        16 => unshuffle_w::<16>(src, dst),
        _ => dst.copy_from_slice(src),
    }
}

/// Elements are moved a tile of `T` (64 bytes) at a time: each plane gets
/// `T` bytes per step, gathered in registers (the compiler unrolls the
/// fixed-size loops), so planes are written in words, not byte by byte.
fn shuffle_w<const W: usize, const T: usize>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / W;
    let body = n * W;
    let tiles = n / T;
    for (t, tile) in src[..tiles * T * W].chunks_exact(T * W).enumerate() {
        let mut e = [[0u8; W]; T];
        for (k, x) in e.iter_mut().enumerate() {
            x.copy_from_slice(&tile[k * W..(k + 1) * W]);
        }
        // Indexed by plane: iterating the planes as chunks of `dst` runs
        // three times slower at width 8 (measured).
        #[allow(clippy::needless_range_loop)]
        for j in 0..W {
            let v: [u8; T] = std::array::from_fn(|k| e[k][j]);
            let at = j * n + t * T;
            dst[at..at + T].copy_from_slice(&v);
        }
    }
    for i in tiles * T..n {
        for j in 0..W {
            dst[j * n + i] = src[i * W + j];
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

fn unshuffle_w<const W: usize>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / W;
    let body = n * W;
    let tiles = n / 8;
    for (t, tile) in dst[..tiles * 8 * W].chunks_exact_mut(8 * W).enumerate() {
        for j in 0..W {
            let at = j * n + t * 8;
            let v: [u8; 8] = src[at..at + 8].try_into().expect("eight bytes");
            for (k, b) in v.iter().enumerate() {
                tile[k * W + j] = *b;
            }
        }
    }
    for i in tiles * 8..n {
        for j in 0..W {
            dst[i * W + j] = src[j * n + i];
        }
    }
    dst[body..].copy_from_slice(&src[body..]);
}

fn read_bounded(reader: impl Read, size: u64, entry: &str) -> Res<Vec<u8>> {
    // Room for what the data can plausibly hold, not for what the header
    // claims: the vector grows as real output arrives.
    let cap = size.min(64 << 20) as usize;
    let mut out = Vec::new();
    out.try_reserve_exact(cap).map_err(|_| {
        ArchiveError::new(ArchiveErrorKind::Bomb, format!("cannot hold {size} bytes")).entry(entry)
    })?;
    let mut limited = reader.take(size.saturating_add(1));
    limited
        .read_to_end(&mut out)
        .map_err(|e| corrupt(entry, &e.to_string()))?;
    if out.len() as u64 != size {
        return Err(mismatch(entry, size, out.len() as u64));
    }
    Ok(out)
}

fn mismatch(entry: &str, size: u64, got: u64) -> ArchiveError {
    let got = if got > size {
        "more".to_string()
    } else {
        got.to_string()
    };
    ArchiveError::new(
        ArchiveErrorKind::SizeMismatch,
        format!("the directory says {size} bytes, the data holds {got}"),
    )
    .entry(entry)
}

fn corrupt(entry: &str, why: &str) -> ArchiveError {
    ArchiveError::new(
        ArchiveErrorKind::Malformed,
        format!("corrupt compressed data: {why}"),
    )
    .entry(entry)
}

pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// Pieces from this size on are hashed on a second thread by
/// [`Digest::update_alongside`].
const PARALLEL_MIN: usize = 256 << 10;

/// CRC-32 and BLAKE3 of content that arrives in pieces (a writer streaming
/// an entry to its file).
#[derive(Default, Clone)]
pub struct Digest {
    crc: crc32fast::Hasher,
    blake: blake3::Hasher,
    len: u64,
}

impl Digest {
    pub fn new() -> Self {
        Digest::default()
    }

    pub fn update(&mut self, piece: &[u8]) {
        self.crc.update(piece);
        self.blake.update(piece);
        self.len += piece.len() as u64;
    }

    /// [`update`](Self::update) with `alongside` run at the same time: both
    /// hashes run on a second thread while this one runs `alongside` (the
    /// writer's copy of the piece to its file, which costs about as much as
    /// the two hashes). Small pieces are done in turn, where a thread would
    /// cost more than it saves.
    pub fn update_alongside<T: Send>(
        &mut self,
        piece: &[u8],
        alongside: impl FnOnce() -> T + Send,
    ) -> T {
        if piece.len() < PARALLEL_MIN {
            self.update(piece);
            return alongside();
        }
        let (crc, blake) = (&mut self.crc, &mut self.blake);
        let out = std::thread::scope(|s| {
            s.spawn(|| {
                crc.update(piece);
                blake.update(piece);
            });
            alongside()
        });
        self.len += piece.len() as u64;
        out
    }

    /// Bytes seen so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `(crc32, blake3 hex)` of everything seen.
    pub fn finish(&self) -> (u32, String) {
        (
            self.crc.clone().finalize(),
            self.blake.finalize().to_hex().to_string(),
        )
    }
}

/// The BLAKE3 hash of `data`, as 64 hex digits.
pub fn blake3_hex(data: &[u8]) -> String {
    blake3_parallel(data, hash_threads()).to_hex().to_string()
}

/// Inputs at least this long are hashed on more than one thread: each thread then gets at least
/// half of it (1 MiB, about 250 µs of hashing), far more than starting a thread costs.
const PARALLEL_HASH_MIN: usize = 2 << 20;

/// The threads a large hash may use: the CPUs this process may run on.
fn hash_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `blake3::hash(data)`, computed on up to `threads` threads: BLAKE3 is a tree of 1 KiB chunks,
/// so the input splits where the tree does (`left_subtree_len`), each side's chaining value is
/// computed on a thread of its own (each with BLAKE3's SIMD), and the two are merged into the
/// root. The threads are scoped to the call (no pool that a `fork` could leave half alive).
pub fn blake3_parallel(data: &[u8], threads: usize) -> blake3::Hash {
    use blake3::hazmat::{left_subtree_len, merge_subtrees_root, Mode};
    if threads < 2 || data.len() < PARALLEL_HASH_MIN {
        return blake3::hash(data);
    }
    let (left, right) = data.split_at(left_subtree_len(data.len() as u64) as usize);
    let (l, r) = both(
        threads,
        |t| subtree(left, 0, t),
        |t| subtree(right, left.len(), t),
    );
    merge_subtrees_root(&l, &r, Mode::Hash)
}

/// The chaining value of the subtree `data` that starts at byte `offset` of the input.
fn subtree(data: &[u8], offset: usize, threads: usize) -> blake3::hazmat::ChainingValue {
    use blake3::hazmat::{left_subtree_len, merge_subtrees_non_root, HasherExt, Mode};
    if threads < 2 || data.len() < PARALLEL_HASH_MIN || data.len() <= blake3::CHUNK_LEN {
        return blake3::Hasher::new()
            .set_input_offset(offset as u64)
            .update(data)
            .finalize_non_root();
    }
    let (left, right) = data.split_at(left_subtree_len(data.len() as u64) as usize);
    let right_at = offset + left.len();
    let (l, r) = both(
        threads,
        |t| subtree(left, offset, t),
        |t| subtree(right, right_at, t),
    );
    merge_subtrees_non_root(&l, &r, Mode::Hash)
}

/// `(a(n), b(m))` with `a` on a new thread and `b` on this one, `threads` shared between them.
fn both<A: Send, B>(
    threads: usize,
    a: impl FnOnce(usize) -> A + Send,
    b: impl FnOnce(usize) -> B,
) -> (A, B) {
    let half = threads / 2;
    std::thread::scope(|scope| {
        let left = scope.spawn(move || a(half));
        let right = b(threads - half);
        (
            left.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            right,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parallel_hash_is_blake3s_hash() {
        // Lengths around the split threshold and the tree's chunk and power-of-two boundaries.
        let data: Vec<u8> = (0..(9 << 20) + 3)
            .map(|i: usize| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let k = blake3::CHUNK_LEN;
        let lens = [
            0,
            1,
            k,
            PARALLEL_HASH_MIN - 1,
            PARALLEL_HASH_MIN,
            PARALLEL_HASH_MIN + 1,
            PARALLEL_HASH_MIN + k,
            3 << 20,
            (4 << 20) - 1,
            4 << 20,
            (4 << 20) + 1,
            (5 << 20) + 7,
            (8 << 20) + k + 1,
            data.len(),
        ];
        for len in lens {
            let want = blake3::hash(&data[..len]);
            for threads in [1, 2, 3, 4, 7, 16] {
                assert_eq!(
                    blake3_parallel(&data[..len], threads),
                    want,
                    "{len} on {threads}"
                );
            }
        }
    }
}
