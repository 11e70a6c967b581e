package pmml

// compileMining compiles a MiningModel in fs.
func (c *compiler) compileMining(mm *miningModel, fs *fieldSet) (model, error) {
	return nil, unsupported("PMML element MiningModel is not supported")
}
