package cost

// Points is every extension point's registered plug-ins, resolved once
// from the registries (Resolve) by the point's dispatch rule (Rules),
// and held by the framework beside the shards a step is costed on: a
// First point is its first implementer (nil: none), an Each point its
// implementers in the order registered (families first where both
// registries are asked), a Pricing or EachPricing point its
// implementers with each one's bit in a record (Pricing, EachPricing),
// so that the record, not a lookup by name, says which are asked.
// Nothing in it changes after Resolve: a test that registers a
// plug-in of its own resolves Points of its own.
type Points struct {
	// Families, Mechanisms and CodeBases are the registries it was
	// resolved from; a record's bits name their plug-ins (Registry.Named).
	Families, Mechanisms, CodeBases *Registry

	CPAttention       Pricing[CPAttention]
	FineTune          Pricing[FineTune]
	SSMBlock          SSMBlock
	LinearMixer       LinearMixer
	GroupedGEMM       GroupedGEMM
	LowPrecision      Pricing[LowPrecision]
	TokenDispatcher   TokenDispatcher
	AttentionKernels  EachPricing[AttentionKernels]
	MLPKernels        EachPricing[MLPKernels]
	ExpertActivation  EachPricing[ExpertActivation]
	ExpertOutput      EachPricing[ExpertOutput]
	RouterKernels     EachPricing[RouterKernels]
	OutputHeads       EachPricing[OutputHeads]
	ExpertLoad        Pricing[ExpertLoad]
	AttentionBlock    Pricing[AttentionBlock]
	PredictionModules Pricing[PredictionModules]
	AttentionMemory   Pricing[AttentionMemory]
	PredictionMemory  Pricing[PredictionMemory]

	StepClock    StepClock
	Host         Host
	StepKernels  []StepKernels
	Optimizer    Pricing[Optimizer]
	FSDP         Pricing[FSDP]
	GatherWire   Pricing[GatherWire]
	DataParallel Pricing[DataParallel]
	Contention   Pricing[Contention]
	StageKernels EachPricing[StageKernels]
	StepHost     EachPricing[StepHost]
	// HighPrecisionLayers is the stages' layers run in BF16 under a
	// low-precision recipe (HighPrecisionLayers).
	HighPrecisionLayers Pricing[HighPrecisionLayers]
}

// Resolve is the extension points of the families' traits fams, the
// mechanisms mechs and the code bases bases, each by its rule.
func Resolve(fams, mechs, bases *Registry) *Points {
	p := &Points{Families: fams, Mechanisms: mechs, CodeBases: bases,
		CPAttention:       Pricing[CPAttention](eachPricing[CPAttention](nil, mechs)),
		FineTune:          Pricing[FineTune](eachPricing[FineTune](nil, mechs)),
		SSMBlock:          First[SSMBlock](fams),
		LinearMixer:       First[LinearMixer](fams),
		GroupedGEMM:       First[GroupedGEMM](mechs),
		LowPrecision:      Pricing[LowPrecision](eachPricing[LowPrecision](nil, mechs)),
		TokenDispatcher:   First[TokenDispatcher](mechs),
		AttentionKernels:  eachPricing[AttentionKernels](fams, mechs),
		MLPKernels:        eachPricing[MLPKernels](fams, mechs),
		ExpertActivation:  eachPricing[ExpertActivation](fams, mechs),
		ExpertOutput:      eachPricing[ExpertOutput](fams, mechs),
		RouterKernels:     eachPricing[RouterKernels](fams, mechs),
		OutputHeads:       eachPricing[OutputHeads](fams, mechs),
		ExpertLoad:        Pricing[ExpertLoad](eachPricing[ExpertLoad](nil, mechs)),
		AttentionBlock:    Pricing[AttentionBlock](eachPricing[AttentionBlock](fams, mechs)),
		PredictionModules: Pricing[PredictionModules](eachPricing[PredictionModules](fams, mechs)),
		AttentionMemory:   Pricing[AttentionMemory](eachPricing[AttentionMemory](fams, mechs)),
		PredictionMemory:  Pricing[PredictionMemory](eachPricing[PredictionMemory](fams, mechs)),

		StepClock:    First[StepClock](mechs),
		Host:         First[Host](mechs),
		StepKernels:  Each[StepKernels](mechs),
		Optimizer:    Pricing[Optimizer](eachPricing[Optimizer](nil, mechs)),
		FSDP:         Pricing[FSDP](eachPricing[FSDP](nil, mechs)),
		GatherWire:   Pricing[GatherWire](eachPricing[GatherWire](nil, mechs)),
		DataParallel: Pricing[DataParallel](eachPricing[DataParallel](nil, mechs)),
		Contention:   Pricing[Contention](eachPricing[Contention](nil, mechs)),
		StageKernels: eachPricing[StageKernels](nil, mechs),
		StepHost:     eachPricing[StepHost](nil, mechs),

		HighPrecisionLayers: Pricing[HighPrecisionLayers](eachPricing[HighPrecisionLayers](nil, mechs)),
	}
	return p
}

// Decide is what prices shard s's step (Record): the families' traits,
// the mechanisms and the code base whose declarations hold for s
// (Registry.Decide; a code base's, the stack's settings that run it).
func (p *Points) Decide(s *Shard) Record {
	return Record{Families: p.Families.Decide(s), Mechanisms: p.Mechanisms.Decide(s), CodeBases: p.CodeBases.Decide(s)}
}

// eachPricing is every plug-in that implements T with its bit, the
// families' traits fams' (nil: none) then the mechanisms mechs'.
func eachPricing[T Plugin](fams, mechs *Registry) EachPricing[T] {
	var ps EachPricing[T]
	if fams != nil {
		for i, q := range fams.plugins {
			if t, ok := q.(T); ok {
				ps.ps = append(ps.ps, implementer[T]{P: t, Bit: Record{Families: 1 << i}})
			}
		}
	}
	for i, q := range mechs.plugins {
		if t, ok := q.(T); ok {
			ps.ps = append(ps.ps, implementer[T]{P: t, Bit: Record{Mechanisms: 1 << i}})
		}
	}
	return ps
}
