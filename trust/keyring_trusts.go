package trust

// Trusts reports whether r holds k (the same key under the same ID): a
// writer whose own key its readers' keyring lacks writes nothing they
// would believe.
func (r *Keyring) Trusts(k *PublicKey) bool {
	if r == nil || k == nil {
		return false
	}
	have := r.byID[k.ID]
	return have != nil && have.Key.Equal(k.Key)
}
