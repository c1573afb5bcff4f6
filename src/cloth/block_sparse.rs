//! 3×3-block sparsity of the cloth's sparse solves: per column node q its sorted row nodes;
//! the scalar CSC matrix (3n × 3n) has columns 3q, 3q+1, 3q+2 holding rows 3p..3p+2 of each
//! row node p.

use faer::sparse::SymbolicSparseColMat;

use super::Mat3;

#[derive(Debug, Clone)]
pub(crate) struct BlockPattern {
    /// Start of column node q in `rows` (length nodes + 1).
    pub start: Vec<usize>,
    /// Row node of each block, sorted within each column.
    pub rows: Vec<u32>,
    /// Column node of each block.
    block_col: Vec<u32>,
    pub symbolic: SymbolicSparseColMat<usize>,
}

impl BlockPattern {
    /// The pattern with the row nodes `cols[q]` in column node q (unsorted, repeats allowed).
    pub(crate) fn new(mut cols: Vec<Vec<u32>>) -> Self {
        let n = cols.len();
        let mut start = Vec::with_capacity(n + 1);
        let mut rows = Vec::new();
        let mut block_col = Vec::new();
        start.push(0);
        for (q, c) in cols.iter_mut().enumerate() {
            c.sort_unstable();
            c.dedup();
            rows.extend_from_slice(c);
            block_col.extend(std::iter::repeat_n(q as u32, c.len()));
            start.push(rows.len());
        }
        let mut col_ptr = Vec::with_capacity(3 * n + 1);
        let mut row_idx = Vec::with_capacity(9 * rows.len());
        col_ptr.push(0usize);
        for q in 0..n {
            for _c in 0..3 {
                for &p in &rows[start[q]..start[q + 1]] {
                    row_idx.extend([3 * p as usize, 3 * p as usize + 1, 3 * p as usize + 2]);
                }
                col_ptr.push(row_idx.len());
            }
        }
        let symbolic = SymbolicSparseColMat::new_checked(3 * n, 3 * n, col_ptr, None, row_idx);
        Self {
            start,
            rows,
            block_col,
            symbolic,
        }
    }

    /// Column nodes.
    pub(crate) fn nodes(&self) -> usize {
        self.start.len() - 1
    }

    /// Block index of (p, q), if the pattern holds it.
    #[inline]
    pub(crate) fn find(&self, p: usize, q: usize) -> Option<u32> {
        let (s, e) = (self.start[q], self.start[q + 1]);
        self.rows[s..e]
            .binary_search(&(p as u32))
            .ok()
            .map(|k| (s + k) as u32)
    }

    /// Block index of a pair the pattern was built with (the column's first block otherwise).
    #[inline]
    pub(crate) fn held(&self, p: usize, q: usize) -> u32 {
        self.find(p, q).unwrap_or(self.start[q] as u32)
    }

    /// Scalar position of entry (r, c) of block `bi`.
    #[inline]
    fn pos(&self, bi: u32, r: usize, c: usize) -> usize {
        let q = self.block_col[bi as usize] as usize;
        let s = self.start[q];
        let len = self.start[q + 1] - s;
        9 * s + 3 * (bi as usize - s) + 3 * c * len + r
    }

    #[inline]
    pub(crate) fn add(&self, values: &mut [f64], bi: u32, m: &Mat3) {
        for c in 0..3 {
            for r in 0..3 {
                values[self.pos(bi, r, c)] += m[(r, c)];
            }
        }
    }

    #[inline]
    pub(crate) fn get(&self, values: &[f64], bi: u32) -> Mat3 {
        Mat3::from_fn(|r, c| values[self.pos(bi, r, c)])
    }

    #[inline]
    pub(crate) fn set(&self, values: &mut [f64], bi: u32, m: &Mat3) {
        for c in 0..3 {
            for r in 0..3 {
                values[self.pos(bi, r, c)] = m[(r, c)];
            }
        }
    }
}
