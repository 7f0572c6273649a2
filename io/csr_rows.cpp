// placeholder: implemented by the io work
