package exact

// permutedInner returns n·T_π = Σᵢⱼ K̃_X,ᵢⱼ K̃_Y,p(i)p(j) = tr(K̃_X Π K̃_Y Πᵀ)
// for the pairing p, from the upper triangle of K_X, the full storage yFull
// of K_Y (row p(i) is read contiguously and gathered at p(j), without
// branches) and their centerings: since Π K̃_Y Πᵀ is doubly centered,
// tr(K̃_X M) = tr(K_X M) for it, and
//
//	Σᵢⱼ K_X,ᵢⱼ (K_Y,p(i)p(j) − s_p(i) − s_p(j) + m_Y)
//	  = Σᵢⱼ K_X,ᵢⱼ K_Y,p(i)p(j) − 2n Σᵢ rᵢ s_p(i) + n² m_X m_Y
//
// with r, s the row means and m_X, m_Y the means of K_X and K_Y.
func permutedInner(cx, cy centring, yFull []float64, p []int) float64 {
	x := cx.g
	n := x.N
	var diag, off, cross float64
	for i := 0; i < n; i++ {
		xr := x.Data[i*x.Stride : i*x.Stride+n]
		pi := p[i]
		yr := yFull[pi*n : pi*n+n]
		diag += xr[i] * yr[pi]
		cross += cx.rows[i] * cy.rows[pi]
		pj := p[i+1 : n]
		xs := xr[i+1 : n]
		var s0, s1, s2, s3 float64
		j := 0
		for ; j+4 <= len(xs); j += 4 {
			s0 += xs[j] * yr[pj[j]]
			s1 += xs[j+1] * yr[pj[j+1]]
			s2 += xs[j+2] * yr[pj[j+2]]
			s3 += xs[j+3] * yr[pj[j+3]]
		}
		for ; j < len(xs); j++ {
			s0 += xs[j] * yr[pj[j]]
		}
		off += (s0 + s1) + (s2 + s3)
	}
	nf := float64(n)
	return diag + 2*off - 2*nf*cross + nf*nf*cx.mean*cy.mean
}
