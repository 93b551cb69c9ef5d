// Labels, `break` with values, `continue`, `return`, `?`, and nested loops
// keep their meaning.
#![forbid(unsafe_code)]
#![deny(warnings)]

use batch_alloc::batch_alloc;
use std::num::ParseIntError;

#[batch_alloc]
fn labelled(grid: &[&[u64]]) -> (Vec<Box<u64>>, Option<Box<(usize, usize)>>) {
    let mut out = Vec::new();
    let mut found = None;
    'rows: for (r, row) in grid.iter().enumerate() {
        'cols: for (c, &cell) in row.iter().enumerate() {
            if cell == 0 {
                continue 'cols;
            }
            if cell == 99 {
                found = Some(Box::new((r, c)));
                break 'rows;
            }
            if cell > 50 {
                continue 'rows;
            }
            out.push(Box::new(cell));
        }
    }
    (out, found)
}

#[batch_alloc]
fn break_value_from_inner(limit: u64) -> Box<u64> {
    let mut i = 0;
    'outer: loop {
        while i < limit {
            i += 1;
            if i * i > limit {
                break 'outer Box::new(i);
            }
        }
        break Box::new(0);
    }
}

#[batch_alloc]
fn parse_all(words: &[&str]) -> Result<Vec<Box<u64>>, ParseIntError> {
    let mut out = Vec::new();
    for word in words {
        if word.is_empty() {
            return Ok(out);
        }
        out.push(Box::new(word.parse::<u64>()?));
    }
    Ok(out)
}

#[batch_alloc]
fn nested(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    for i in 0..n {
        let mut j = 0;
        while j < i {
            for k in 0..2 {
                out.push(Box::new(i * 100 + j * 10 + k));
            }
            j += 1;
        }
        out.push(Box::new(i));
    }
    out
}

#[batch_alloc]
fn in_head(n: u64) -> Vec<Box<u64>> {
    let mut out = Vec::new();
    // The head runs once: its own loop is a nest of its own.
    for i in loop {
        break *Box::new(n);
    }..n + 2
    {
        out.push(Box::new(i));
    }
    out
}

fn main() {
    let grid: [&[u64]; 3] = [&[1, 0, 2], &[3, 60, 4], &[5, 99, 6]];
    let (cells, found) = labelled(&grid);
    assert_eq!(cells.iter().map(|b| **b).collect::<Vec<_>>(), [1, 2, 3, 5]);
    assert_eq!(found.as_deref(), Some(&(2, 1)));
    assert_eq!(*break_value_from_inner(10), 4);
    assert_eq!(parse_all(&["1", "2", "", "x"]).unwrap().len(), 2);
    assert!(parse_all(&["1", "x"]).is_err());
    assert_eq!(nested(3).len(), 3 + 2 * (1 + 2));
    assert_eq!(in_head(3).iter().map(|b| **b).collect::<Vec<_>>(), [3, 4]);
}
