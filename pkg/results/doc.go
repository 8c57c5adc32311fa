// Package results owns kvbench's detail CSV: the row of one measured
// attempt, its columns, its status values, the writer "kvbench run" appends
// rows with and the reader "kvbench report" (and every later consumer)
// reads them back with; and the CSVs written beside it: the nodes CSV
// (NodeRow, one row per attempt and master of a cluster) and the series
// CSV (SeriesRow, one row per attempt, command and interval). ScenarioKey
// names the scenario a row measured, as every later consumer keys it.
//
// The schema has one source: the csv tags of Row, in field order. Columns
// are only ever appended, so that CSVs written by earlier versions keep
// reading (a column they lack reads as its zero value), and unknown columns
// are ignored, so that older readers accept newer files.
package results
