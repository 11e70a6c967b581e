// Package demo holds the demonstration processes that the reference server
// and the end-to-end tests deploy: a Gaussian naive Bayes classifier trained
// on the iris data set when the process is built, and a process that only
// sleeps, for trying timeouts, full queues and stopped jobs.
//
// iris.csv is R. A. Fisher's iris data (1936) as distributed by the UCI
// Machine Learning Repository, in the public domain; its header is renamed
// to snake_case and the species to their short names.
package demo
