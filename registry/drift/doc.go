// Package drift watches the rows a model scores for drift and data
// quality: it compares them with the rows the model was built on, feature
// by feature and for the prediction, in fixed bins.
//
// A model version keeps a reference [Profile], built once from reference
// rows by [BuildProfile] and stored as JSON beside the version: per column
// a histogram of fixed bins (numbers: quantile bins open-ended at both
// ends, with the reference's Min and Max; text: the most frequent
// categories and "other"), and the share of missing values. A model
// version without such rows may have a profile of what its file declares
// instead ([DeclaredProfile]: LightGBM's feature_infos, a PMML
// DataDictionary's Intervals and Values): bins of equal width over each
// declared range and the declared categories, with empty reference
// histograms, which checks ranges and categories, not shapes. On the
// scoring path, a [Live] counts each request's decoded columns in the
// same bins over a sliding [Window] (the last hour, the last 100,000
// rows), in memory fixed when it is made, without a lock shared by the
// scoring goroutines. [Live.Snapshot] reads the window's [Histograms];
// the Histograms of several replicas add up with [Merge]; [Compare] turns
// them and the profile into a [Report]: per column PSI, the
// Jensen–Shannon distance, the missing rates, the share of numbers out of
// the reference's range and of categories it never had.
//
//	reference rows → BuildProfile → Profile (JSON, with the model version)
//	or ModelSchema.Domains → DeclaredProfile → Profile (Declared)
//	request table  → Live.Observe → Live.Snapshot → Histograms
//	Profile + Histograms (merged over replicas) → Compare → Report (JSON)
//
// The package only computes: it imports package process and the standard
// library, reads the time only through Window.Now, and keeps no state of its
// own.
package drift
