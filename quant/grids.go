package quant

// The codebook tables of the IQ formats (iq2xxsGrid, iq2xsGrid, iq2sGrid,
// iq3xxsGrid, iq3sGrid, iq1sGrid, ksignsIQ2XS, kvaluesIQ4NL) live in
// grids_gen.go, generated from ../shared/testdata/quant/grids.json (the
// shared test data beside the repository root) by scripts/gengrids.
// scripts/gengrids' tests fail if the generated file is stale.

//go:generate go run ../scripts/gengrids
