package embedding

// Spec is a resolved feature spec (DESIGN §2): every default filled in.
type Spec struct {
	Version     int      `json:"version"`
	Seed        uint64   `json:"seed"`
	Dim         int      `json:"dim"`
	Bounds      Bounds   `json:"bounds"`
	OutOfBounds string   `json:"out_of_bounds"`
	Families    []Family `json:"families"`
}

// Bounds maps raw points into the unit cube: u = (x − lo)/(hi − lo).
type Bounds struct {
	Lo []float64 `json:"lo"`
	Hi []float64 `json:"hi"`
}

// Family configures one feature family. Which fields apply depends on Kind.
type Family struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // "mmd", "l2" or "hdd"

	// Features is D, the output length of the (last) random Fourier stage (mmd, hdd, l2 with Sigma).
	Features int `json:"features,omitempty"`
	// Bandwidth is the mmd base Gaussian kernel bandwidth in normalised units.
	Bandwidth float64 `json:"bandwidth,omitempty"`
	// RBFSigma and RBFFeatures configure mmd's optional second stage.
	RBFSigma    float64 `json:"rbf_sigma,omitempty"`
	RBFFeatures int     `json:"rbf_features,omitempty"`
	// Basis is |V|, the number of cosine basis functions (l2, hdd).
	Basis int `json:"basis,omitempty"`
	// Sigma is the outer RBF bandwidth (hdd; l2's optional RFF stage).
	Sigma float64 `json:"sigma,omitempty"`

	// hdd only.
	Divergence     string  `json:"divergence,omitempty"`
	Lambdas        int     `json:"lambdas,omitempty"`
	LambdaSampling string  `json:"lambda_sampling,omitempty"`
	Grid           int     `json:"grid,omitempty"`
	KDEBandwidth   float64 `json:"kde_bandwidth,omitempty"`
	Boundary       string  `json:"boundary,omitempty"`
	DensityFloor   float64 `json:"density_floor,omitempty"`
	Mode           string  `json:"mode,omitempty"`
	Coefficients   bool    `json:"coefficients,omitempty"`
}
