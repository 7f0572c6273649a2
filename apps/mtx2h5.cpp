int main() { return 1; }  // placeholder: mtx2h5 lands with the io work
