package cost

// Set is a record of which plug-ins of one registry price a step: bit
// i the i-th registered (a registry holds at most 64: Register refuses
// more). The framework decides it once, when it makes a step's shard
// (Decide, recorded as the shard's Priced), and reads it at each
// extension point and for a figure's provenance (Named).
type Set uint64

// Record is what the framework decided prices a step, once, when it
// made the step's shard: the families' traits and the mechanisms (each
// registry's Set), and the code base whose layer costs price its
// layers (CodeBases: a Set of the code bases' registry, as the other
// two are of theirs, with one bit).
type Record struct{ Families, Mechanisms, CodeBases Set }

// Union is the families' traits and the mechanisms that price the step
// of r's shard or of q's (a plan's stages of two tensor-parallel degrees
// are two shards), with r's code base (a plan's first stage's).
func (r Record) Union(q Record) Record {
	return Record{Families: r.Families | q.Families, Mechanisms: r.Mechanisms | q.Mechanisms, CodeBases: r.CodeBases}
}

// maxPlugins is the most plug-ins one registry holds (Set's bits).
const maxPlugins = 64
