// Package pmml reads PMML files (the Predictive Model Markup Language of the
// Data Mining Group, versions 4.0 to 4.4) and scores them in pure Go, as a
// [registry.ModelFormat]: a host registers [Format] with
// [registry.Catalog.RegisterFormat], and an uploaded file becomes a
// [registry.Process] that endpoints run like any compiled one.
//
// # Reading a file
//
// A file is read in two passes. The first walks its XML tokens, bounding
// how deep elements nest and how many there are ([Limits]) and refusing a
// DOCTYPE outright: PMML needs none, and entity declarations are how an XML
// bomb hides. Only then does encoding/xml unmarshal it into typed structs,
// which are compiled into a model that scores rows without touching XML
// again. Every element or attribute value that would change the answer and
// that the reader does not implement is refused by name when the file is
// loaded: the reader never scores a model differently from its producer.
package pmml
