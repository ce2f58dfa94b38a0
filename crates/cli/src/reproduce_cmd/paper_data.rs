//! A paper's own numbers (`experiments/papers/<NNN>.toml`): its tables,
//! quoted exactly as printed, so that a report sets them beside ours.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

/// A paper's data file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PaperData {
    /// Its number (`"001"`).
    pub(crate) paper: String,
    pub(crate) title: String,
    pub(crate) authors: String,
    /// Its text's file name in ../shared/papers.
    pub(crate) file: String,
    #[serde(rename = "table", default)]
    pub(crate) tables: Vec<PaperTable>,
}

/// One of the paper's tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PaperTable {
    /// How the recipe names it (`"table1"`).
    pub(crate) id: String,
    /// How the paper names it (`"Table 1"`).
    pub(crate) label: String,
    pub(crate) caption: String,
    pub(crate) columns: Vec<String>,
    /// The cells as printed, the row's label first.
    pub(crate) rows: Vec<Vec<String>>,
}

impl PaperData {
    /// Reads and checks `path`: every row as wide as its table's columns.
    pub(crate) fn read(path: &Path) -> Result<PaperData> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let data: PaperData = toml::from_str(&text)
            .with_context(|| format!("{} is not a paper's data file", path.display()))?;
        for table in &data.tables {
            for (i, row) in table.rows.iter().enumerate() {
                if row.len() != table.columns.len() {
                    bail!(
                        "{}: {} row {} has {} cells for {} columns",
                        path.display(),
                        table.label,
                        i + 1,
                        row.len(),
                        table.columns.len()
                    );
                }
            }
        }
        Ok(data)
    }

    /// The table `id`.
    pub(crate) fn table(&self, id: &str) -> Result<&PaperTable> {
        self.tables
            .iter()
            .find(|t| t.id == id)
            .with_context(|| format!("paper {}'s data file has no table `{id}`", self.paper))
    }
}

impl PaperTable {
    /// The cell of row `row` (by index) in column `column` (by name), as
    /// printed.
    pub(crate) fn text(&self, row: usize, column: &str) -> Result<&str> {
        let c = self
            .columns
            .iter()
            .position(|name| name == column)
            .with_context(|| format!("{} has no column `{column}`", self.label))?;
        self.rows
            .get(row)
            .and_then(|r| r.get(c))
            .map(String::as_str)
            .with_context(|| format!("{} has no row {}", self.label, row + 1))
    }

    /// The cell as a number; `None` for a cell such as "N/A" or "n.a.".
    pub(crate) fn number(&self, row: usize, column: &str) -> Result<Option<f64>> {
        Ok(self.text(row, column)?.parse::<f64>().ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_found_by_row_and_column() {
        let data: PaperData = toml::from_str(
            r#"
paper = "001"
title = "t"
authors = "a"
file = "f.txt"
[[table]]
id = "table1"
label = "Table 1"
caption = "c"
columns = ["scheme", "rate"]
rows = [["one", "54"], ["two", "N/A"]]
"#,
        )
        .unwrap();
        let table = data.table("table1").unwrap();
        assert_eq!(table.number(0, "rate").unwrap(), Some(54.0));
        assert_eq!(table.number(1, "rate").unwrap(), None);
        assert!(table.text(2, "rate").is_err());
        assert!(table
            .text(0, "nope")
            .unwrap_err()
            .to_string()
            .contains("no column `nope`"));
        assert!(data.table("table9").is_err());
    }
}
